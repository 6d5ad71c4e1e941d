#version 450
in vec2 v_uv;
in vec3 v_t;
in vec3 v_b;
in vec3 v_n;
layout(binding = 1) uniform sampler2D normal_tex;
layout(binding = 2) uniform sampler2D base_tex;
layout(location = 0) out vec4 color;
void main() {
    vec3 tn = texture(normal_tex, v_uv).xyz * 2.0 - 1.0;
    vec3 n = normalize(mat3(v_t, v_b, v_n) * tn);
    float d = clamp(dot(n, vec3(0.0, 0.0, 1.0)), 0.0, 1.0);
    color = texture(base_tex, v_uv) * d;
}
