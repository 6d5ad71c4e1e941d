#version 450
in vec3 v_pos;
in vec3 v_normal;
in vec2 v_uv0;
in vec2 v_uv1;
in vec4 v_color;
layout(binding = 1) uniform sampler2D base_map;
layout(binding = 2) uniform sampler2D mr_map;
layout(binding = 3) uniform Light { vec3 dir; vec3 color; vec3 eye; } light;
layout(location = 0) out vec4 color;
const float PI = 3.14159265;
float ggx(float nh, float a) { float a2 = a * a; float d = nh * nh * (a2 - 1.0) + 1.0; return a2 / (PI * d * d); }
void main() {
    vec4 base = texture(base_map, v_uv0) * v_color;
    vec2 mr = texture(mr_map, v_uv1).bg;
    vec3 n = normalize(v_normal);
    vec3 v = normalize(light.eye - v_pos);
    vec3 l = normalize(-light.dir);
    vec3 h = normalize(l + v);
    float nl = max(dot(n, l), 0.0);
    vec3 f0 = mix(vec3(0.04), base.rgb, mr.x);
    float spec = ggx(max(dot(n, h), 0.0), mr.y * mr.y);
    color = vec4((base.rgb * (1.0 - mr.x) / PI + f0 * spec) * light.color * nl, base.a);
}
