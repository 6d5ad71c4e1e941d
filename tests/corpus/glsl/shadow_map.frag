#version 450
in vec4 v_light_pos;
in vec3 v_normal;
in float v_depth;
layout(binding = 1) uniform sampler2DShadow shadow;
layout(location = 0) out vec4 color;
void main() {
    vec3 p = v_light_pos.xyz / v_light_pos.w * 0.5 + 0.5;
    float lit = 0.0;
    for (int x = -1; x <= 1; ++x)
        for (int y = -1; y <= 1; ++y)
            lit += texture(shadow, vec3(p.xy + vec2(x, y) / 1024.0, p.z - 0.002));
    lit /= 9.0;
    float n = max(dot(normalize(v_normal), vec3(0.0, 1.0, 0.0)), 0.0);
    color = vec4(vec3(n * lit), 1.0);
}
