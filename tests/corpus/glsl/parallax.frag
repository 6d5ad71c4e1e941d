#version 450
in vec2 v_uv;
in vec3 v_view_ts;
layout(binding = 1) uniform sampler2D height;
layout(binding = 2) uniform sampler2D diffuse;
layout(location = 0) out vec4 color;
void main() {
    vec3 v = normalize(v_view_ts);
    vec2 step = v.xy / v.z * 0.004;
    vec2 uv = v_uv;
    float layer = 0.0;
    float h = texture(height, uv).r;
    while (layer < h && layer < 1.0) {
        uv -= step;
        layer += 0.0625;
        h = texture(height, uv).r;
    }
    color = texture(diffuse, uv);
}
